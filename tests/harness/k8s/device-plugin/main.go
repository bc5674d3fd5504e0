// gpc-device-plugin: TEST DOUBLE of NVIDIA's device plugin for the test nodes only (never a role).
// The GPU Operator's images cannot run on the test machines; this kubelet device plugin advertises
// the emulated GPUs of a node (the count comes from the recorded nvidia-smi capture the node's
// nvidia-smi double prints) as nvidia.com/gpu, and hands a container its /dev/nvidiaN device
// nodes and NVIDIA_VISIBLE_DEVICES, as the real plugin does.
// Usage: gpc-device-plugin -count N [-resource nvidia.com/gpu]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	pb "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

type plugin struct {
	pb.UnimplementedDevicePluginServer
	devices []*pb.Device
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pb.Empty) (*pb.DevicePluginOptions, error) {
	return &pb.DevicePluginOptions{}, nil
}

func (p *plugin) ListAndWatch(_ *pb.Empty, stream pb.DevicePlugin_ListAndWatchServer) error {
	if err := stream.Send(&pb.ListAndWatchResponse{Devices: p.devices}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

func (p *plugin) GetPreferredAllocation(context.Context, *pb.PreferredAllocationRequest) (*pb.PreferredAllocationResponse, error) {
	return &pb.PreferredAllocationResponse{}, nil
}

func (p *plugin) Allocate(_ context.Context, req *pb.AllocateRequest) (*pb.AllocateResponse, error) {
	resp := &pb.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		car := &pb.ContainerAllocateResponse{Envs: map[string]string{
			"NVIDIA_VISIBLE_DEVICES": strings.Join(c.DevicesIDs, ","),
		}}
		for _, id := range c.DevicesIDs {
			minor := strings.TrimPrefix(id, "gpu-")
			path := "/dev/nvidia" + minor
			car.Devices = append(car.Devices, &pb.DeviceSpec{ContainerPath: path, HostPath: path, Permissions: "rw"})
		}
		resp.ContainerResponses = append(resp.ContainerResponses, car)
	}
	return resp, nil
}

func (p *plugin) PreStartContainer(context.Context, *pb.PreStartContainerRequest) (*pb.PreStartContainerResponse, error) {
	return &pb.PreStartContainerResponse{}, nil
}

func dial(socket string) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return grpc.DialContext(ctx, socket, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", addr)
		}))
}

func main() {
	count := flag.Int("count", 0, "GPUs to advertise")
	resource := flag.String("resource", "nvidia.com/gpu", "resource name")
	flag.Parse()
	if *count <= 0 {
		log.Fatal("-count must be a positive number of GPUs")
	}
	p := &plugin{}
	for i := 0; i < *count; i++ {
		p.devices = append(p.devices, &pb.Device{ID: fmt.Sprintf("gpu-%d", i), Health: pb.Healthy})
	}
	endpoint := "gpc-device-plugin.sock"
	socket := filepath.Join(pb.DevicePluginPath, endpoint)
	for {
		// Started before kubelet runs (or after it cleared the folder): wait for kubelet's folder.
		if err := os.MkdirAll(pb.DevicePluginPath, 0o755); err != nil {
			log.Fatalf("mkdir %s: %v", pb.DevicePluginPath, err)
		}
		os.Remove(socket)
		listener, err := net.Listen("unix", socket)
		if err != nil {
			log.Printf("listen %s: %v (retrying)", socket, err)
			time.Sleep(2 * time.Second)
			continue
		}
		server := grpc.NewServer()
		pb.RegisterDevicePluginServer(server, p)
		go server.Serve(listener)
		conn, err := dial(pb.KubeletSocket)
		if err == nil {
			_, err = pb.NewRegistrationClient(conn).Register(context.Background(), &pb.RegisterRequest{
				Version: pb.Version, Endpoint: endpoint, ResourceName: *resource})
			conn.Close()
		}
		if err != nil {
			log.Printf("register with kubelet: %v (retrying)", err)
			server.Stop()
			time.Sleep(2 * time.Second)
			continue
		}
		log.Printf("advertising %d %s", *count, *resource)
		// kubelet removes the plugin sockets when it restarts: register again then.
		for {
			time.Sleep(2 * time.Second)
			if _, err := os.Stat(socket); err != nil {
				break
			}
		}
		server.Stop()
	}
}
